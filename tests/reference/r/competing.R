# Fine-Gray subdistribution hazards regression (cmprsk::crr) on R's mgus2: progression to a
# plasma-cell malignancy (cause 1) with death before progression as the competing risk (cause 2).
# Run from the repository root:  Rscript tests/reference/r/competing.R
script <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
source(file.path(dirname(script), "common.R"))
suppressPackageStartupMessages(library(cmprsk))
mgus2 <- read.csv(file.path(DATA, "mgus2.csv"))
etime <- ifelse(mgus2$pstat == 0, mgus2$futime, mgus2$ptime)
event <- ifelse(mgus2$pstat == 0, 2 * mgus2$death, 1)
male <- as.integer(mgus2$sex == "M")
X <- cbind(age = mgus2$age, male = male)
for (cause in 1:2) {
  # gtol tightened from 1e-6: at the default crr stops with a score of ~6e-6, its coefficients
  # converged to only ~1e-8 relative
  fit <- crr(etime, event, X, failcode = cause, cencode = 0, gtol = 1e-12, maxiter = 50)
  case <- paste0("mgus2.crr.cause", cause)
  put(case, "coef", fit$coef)
  put(case, "se", sqrt(diag(fit$var)))
  put(case, "loglik", fit$loglik)
}
# Gray's k-sample test of cumulative incidence (cmprsk::cuminc's Tests), per cause
sex <- mgus2$sex
agegrp <- cut(mgus2$age, c(0, 60, 70, 80, Inf))
for (rho in c(0, 1)) {
  tst <- cuminc(etime, event, group = sex, rho = rho, cencode = 0)$Tests
  put(paste0("mgus2.gray.sex.rho", rho), "stat", tst[, "stat"])
  put(paste0("mgus2.gray.sex.rho", rho), "df", tst[, "df"])
  put(paste0("mgus2.gray.sex.rho", rho), "pv", tst[, "pv"])
  tst <- cuminc(etime, event, group = agegrp, rho = rho, cencode = 0)$Tests
  put(paste0("mgus2.gray.age.rho", rho), "stat", tst[, "stat"])
  put(paste0("mgus2.gray.age.rho", rho), "df", tst[, "df"])
  put(paste0("mgus2.gray.age.rho", rho), "pv", tst[, "pv"])
}
tst <- cuminc(etime, event, group = agegrp, strata = sex, cencode = 0)$Tests
put("mgus2.gray.age.strata.sex", "stat", tst[, "stat"])
put("mgus2.gray.age.strata.sex", "pv", tst[, "pv"])
# Aalen-Johansen cumulative incidence and its variance (cuminc without groups) at chosen times
ci <- cuminc(etime, event, cencode = 0)
tp <- timepoints(ci, c(12, 60, 120, 240, 360))
for (cause in 1:2) {
  put(paste0("mgus2.cuminc.cause", cause), "est", tp$est[cause, ])
  put(paste0("mgus2.cuminc.cause", cause), "var", tp$var[cause, ])
}
save_values("competing")
