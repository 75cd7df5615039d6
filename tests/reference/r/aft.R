# Reference values of accelerated-failure-time regression (R survival survreg) on R's own
# datasets, for the Weibull, exponential, lognormal and log-logistic distributions.
# Run from the repository root:  Rscript tests/reference/r/aft.R [output folder]
source(file.path("tests/reference/r", "common.R"))
rd <- function(name) read.csv(file.path(DATA, paste0(name, ".csv")))
# Newton iterations to a 1e-13 relative change of the log-likelihood (R's default 1e-9 stops
# short of the maximum in the 8th digit); reliab iterates until the Newton step is < 1e-12.
CTL <- survreg.control(rel.tolerance = 1e-13, maxiter = 200)
DISTS <- c("weibull", "exponential", "lognormal", "loglogistic")
P <- c(0.1, 0.5, 0.9)

fitted_values <- function(case, fit, newdata, t_new) {
  put(case, "coef", coef(fit))
  if (length(fit$scale) && fit$dist != "exponential") put(case, "log_scale", log(fit$scale))
  put(case, "se", sqrt(diag(vcov(fit))))
  put(case, "loglik", fit$loglik)
  put(case, "quantile_new", predict(fit, newdata = newdata, type = "quantile", p = P))
  lp <- predict(fit, newdata = newdata, type = "lp")
  put(case, "survival_new", 1 - psurvreg(t_new, mean = lp, scale = fit$scale, distribution = fit$dist))
}

lung <- rd("lung")
lung$dead <- as.numeric(lung$status == 2)
lung <- lung[!is.na(lung$ph.ecog), ]
lung$w <- 1 + (seq_len(nrow(lung)) %% 3) / 2
ovarian <- rd("ovarian")
vet <- rd("veteran")
vet$celltype <- factor(vet$celltype)
for (d in DISTS) {
  fit <- survreg(Surv(time, dead) ~ age + sex + ph.ecog, lung, dist = d, control = CTL)
  fitted_values(paste0("lung_", d), fit, data.frame(age = 60, sex = 2, ph.ecog = 1), 300)
  fit <- survreg(Surv(time, dead) ~ age + sex + ph.ecog, lung, weights = w, dist = d, control = CTL)
  fitted_values(paste0("lung_weights_", d), fit, data.frame(age = 60, sex = 2, ph.ecog = 1), 300)
  fit <- survreg(Surv(futime, fustat) ~ age + ecog.ps + rx, ovarian, dist = d, control = CTL)
  fitted_values(paste0("ovarian_", d), fit, data.frame(age = 55, ecog.ps = 1, rx = 2), 500)
  fit <- survreg(Surv(time, status) ~ trt + celltype + karno + diagtime + age + prior, vet,
                 dist = d, control = CTL)
  fitted_values(paste0("veteran_", d), fit,
                data.frame(trt = 1, celltype = "smallcell", karno = 60, diagtime = 5, age = 60,
                           prior = 0), 100)
}

save_values("aft")
