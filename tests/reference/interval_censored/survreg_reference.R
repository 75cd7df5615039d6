# Reference values for reliab's interval-censored maximum likelihood and Turnbull estimate.
# Run: Rscript survreg_reference.R > survreg_reference.out
# An empty `left` is left-censored (failed before `right`), an empty `right` right-censored
# (survived past `left`), left == right an exact failure time, otherwise failed in (left, right].
library(survival)
d <- read.csv("data.csv")
s <- Surv(d$left, d$right, type = "interval2")
options(digits = 15)
for (dist in c("weibull", "exponential", "lognormal", "loglogistic")) {
  f <- survreg(s ~ 1, dist = dist)
  cat(dist, "intercept", format(coef(f)[[1]], digits = 15),
      "scale", format(f$scale, digits = 15),
      "loglik", format(f$loglik[2], digits = 15), "\n")
}
km <- survfit(s ~ 1)
cat("turnbull time", format(km$time, digits = 15), "\n")
cat("turnbull surv", format(km$surv, digits = 15), "\n")
cat(R.version.string, "survival", as.character(packageVersion("survival")), "\n")
