# Cox model with a shared gamma frailty (penalised partial likelihood, method "em") computed by
# R's survival package on its own datasets.  Run from the repository root:
#   Rscript tests/reference/r/frailty.R [output folder]   (writes frailty_values.csv)
# R's search for theta stops when the marginal (I-)likelihood changes by less than eps
# (relative); eps = 1e-14 here (default 1e-5) and inner Newton to a 1e-13 change, so that R's
# theta is as close to the maximum as its stopping rule allows.
script <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
source(file.path(dirname(script), "common.R"))
rd <- function(name) read.csv(file.path(DATA, paste0(name, ".csv")))
CTL <- coxph.control(eps = 1e-13, toler.chol = 1e-15, iter.max = 100, outer.max = 100)

frail_values <- function(case, fit) {
  put(case, "coef", coef(fit))
  put(case, "se", sqrt(diag(fit$var))[seq_along(coef(fit))])
  put(case, "theta", fit$history[[1]]$theta)
  put(case, "loglik", fit$loglik)                  # null, partial log-likelihood at the fit
  put(case, "iloglik", fit$history[[1]]$c.loglik)  # integrated (marginal) log-likelihood
  put(case, "frail", fit$frail)
}

rats <- rd("rats")
frail_values("rats", coxph(Surv(time, status) ~ rx + frailty(litter, distribution = "gamma",
                                                               eps = 1e-14), rats, control = CTL))
frail_values("rats.theta0.5", coxph(Surv(time, status) ~ rx + frailty(litter, distribution = "gamma",
                                                                       theta = 0.5), rats, control = CTL))
cgd <- rd("cgd")
cgd$treat01 <- as.integer(cgd$treat == "rIFN-g")
frail_values("cgd", coxph(Surv(tstart, tstop, status) ~ treat01 + age + frailty(id, distribution = "gamma",
                                                                               eps = 1e-14),
                          cgd, control = CTL))
save_values("frailty")
