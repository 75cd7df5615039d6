# Reference values of the 3-parameter Weibull (threshold gamma, shape beta, scale eta), fitted by
# maximum likelihood with right censoring on R's own datasets: the closed-form log-likelihood
#   sum_failures [log beta - beta log eta + (beta - 1) log(t - gamma)] - sum_all ((t - gamma)/eta)^beta
# maximised with optim (BFGS) over (gamma / t1, log beta, log eta), t1 the smallest failure time,
# from the 2-parameter survreg fit and gamma = t1 / 2, then polished by Newton steps on the exact
# gradient (Hessian: its central differences).  For veteran the likelihood rises without bound
# as gamma -> t1 (shape < 1): the profile log-likelihood at gamma = t1 - 10^-k is written for
# k = 1..4.
# Run from the repository root:  Rscript tests/reference/r/weibull3.R [output folder]
source(file.path("tests/reference/r", "common.R"))
rd <- function(name) read.csv(file.path(DATA, paste0(name, ".csv")))

w3_loglik <- function(g, b, eta, t, d) {
  if (g >= min(t[d == 1])) return(-Inf)
  x <- pmax(t - g, 0)
  sum(log(b) - b * log(eta) + (b - 1) * log(x[d == 1])) - sum((x / eta)^b)
}
# exact gradient of the negative log-likelihood in (gamma / t1, log beta, log eta)
w3_grad <- function(th, t, d, t1) {
  g <- th[1] * t1; b <- exp(th[2]); eta <- exp(th[3])
  x <- pmax(t - g, 0) / eta; xb <- x^b; f <- d == 1
  dg <- (-(b - 1) * sum(1 / x[f]) + b * sum(ifelse(x > 0, x^(b - 1), 0))) / eta
  db <- sum(f) + b * sum(log(x[f])) - b * sum(ifelse(x > 0, xb * log(x), 0))
  de <- b * (-sum(f) + sum(xb))
  -c(dg * t1, db, de)
}
# Hessian as central differences of the exact gradient, symmetrised
jhess <- function(gr, x, h = 1e-6) {
  J <- t(sapply(seq_along(x), function(i) {
    e <- replace(numeric(length(x)), i, h); (gr(x + e) - gr(x - e)) / (2 * h) }))
  (J + t(J)) / 2
}

fit_case <- function(case, t, d) {
  t1 <- min(t[d == 1])
  nll <- function(th) {
    v <- w3_loglik(th[1] * t1, exp(th[2]), exp(th[3]), t, d)
    if (is.finite(v)) -v else 1e300
  }
  gr <- function(th) w3_grad(th, t, d, t1)
  w2 <- survreg(Surv(t, d) ~ 1, dist = "weibull")
  x <- optim(c(0.5, -log(w2$scale), coef(w2)), nll, gr, method = "BFGS",
             control = list(reltol = 1e-16, maxit = 10000))$par
  for (i in 1:30) {
    step <- solve(jhess(gr, x), gr(x))
    if (max(abs(step)) > 1e-4 && !(nll(x - step) <= nll(x))) break
    x <- x - step
    if (max(abs(step)) < 1e-12) break
  }
  se <- sqrt(diag(solve(jhess(gr, x))))
  put(case, "threshold", x[1] * t1)
  put(case, "log_shape", x[2])
  put(case, "log_scale", x[3])
  put(case, "loglik", -nll(x))
  put(case, "se", c(se[1] * t1, se[2], se[3]))
}

lung <- rd("lung")
fit_case("lung", lung$time, as.numeric(lung$status == 2))
rats <- rd("rats")
fit_case("rats", rats$time, rats$status)

vet <- rd("veteran")
t1 <- min(vet$time[vet$status == 1])
prof <- sapply(1:4, function(k) {
  g <- t1 - 10^-k
  -optimize(function(lb) {
    b <- exp(lb)
    x <- pmax(vet$time - g, 0)
    eta <- (sum(x^b) / sum(vet$status))^(1 / b)
    -w3_loglik(g, b, eta, vet$time, vet$status)
  }, c(log(0.02), log(200)), tol = 1e-12)$objective
})
stopifnot(all(diff(prof) > 0))
put("veteran", "profile_near_t1", prof)

save_values("weibull3")
