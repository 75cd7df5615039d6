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
save_values("competing")
