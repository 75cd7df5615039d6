# Reference values of the gamma and generalized gamma distributions (Prentice 1974, the
# parametrisation of flexsurv's gengamma: mu, sigma, Q) fitted by maximum likelihood with right
# censoring and delayed entry on R's own datasets.  flexsurv is not used: the log-likelihood is
# written here from the density and maximised with optim (BFGS), then polished by Newton steps
# on Richardson-extrapolated central differences so that the maximum is reached to ~1e-11.
# Run from the repository root:  Rscript tests/reference/r/gengamma.R [output folder]
source(file.path("tests/reference/r", "common.R"))
rd <- function(name) read.csv(file.path(DATA, paste0(name, ".csv")))

gg_logpdf <- function(t, mu, sigma, Q) {
  w <- (log(t) - mu) / sigma
  if (Q == 0) return(dnorm(w, log = TRUE) - log(sigma) - log(t))
  k <- Q^-2
  log(abs(Q)) + k * log(k) - log(sigma) - log(t) - lgamma(k) + k * (Q * w - exp(Q * w))
}
gg_logsf <- function(t, mu, sigma, Q) {
  w <- (log(t) - mu) / sigma
  if (Q == 0) return(pnorm(w, lower.tail = FALSE, log.p = TRUE))
  k <- Q^-2
  pgamma(k * exp(Q * w), k, lower.tail = Q < 0, log.p = TRUE)
}
# theta = (mu, log sigma, Q); entry 0 = no delayed entry
gg_loglik <- function(theta, t, d, e) {
  mu <- theta[1]; s <- exp(theta[2]); Q <- theta[3]
  sum(gg_logpdf(t[d == 1], mu, s, Q)) + sum(gg_logsf(t[d == 0], mu, s, Q)) -
    sum(gg_logsf(e[e > 0], mu, s, Q))
}
# theta = (log scale, log shape) of the gamma, density t^(k-1) exp(-t/b) / (Gamma(k) b^k)
gamma_loglik <- function(theta, t, d, e) {
  b <- exp(theta[1]); k <- exp(theta[2])
  sum(dgamma(t[d == 1], k, scale = b, log = TRUE)) +
    sum(pgamma(t[d == 0], k, scale = b, lower.tail = FALSE, log.p = TRUE)) -
    sum(pgamma(e[e > 0], k, scale = b, lower.tail = FALSE, log.p = TRUE))
}
cgrad1 <- function(f, x, h) sapply(seq_along(x), function(i) {
  e <- replace(numeric(length(x)), i, h); (f(x + e) - f(x - e)) / (2 * h) })
chess1 <- function(f, x, h) {
  k <- length(x); H <- matrix(0, k, k)
  for (i in 1:k) for (j in i:k) {
    ei <- replace(numeric(k), i, h); ej <- replace(numeric(k), j, h)
    H[i, j] <- H[j, i] <- (f(x + ei + ej) - f(x + ei - ej) - f(x - ei + ej) + f(x - ei - ej)) / (4 * h * h)
  }
  H
}
# central differences at h and h/2 combined by Richardson extrapolation: error O(h^4)
cgrad <- function(f, x, h = 1e-3) (4 * cgrad1(f, x, h / 2) - cgrad1(f, x, h)) / 3
chess <- function(f, x, h = 2e-3) (4 * chess1(f, x, h / 2) - chess1(f, x, h)) / 3
maximise <- function(nll, starts) {
  fits <- lapply(starts, function(s) optim(s, nll, method = "BFGS",
                                           control = list(reltol = 1e-16, maxit = 5000)))
  x <- fits[[which.min(sapply(fits, `[[`, "value"))]]$par
  for (i in 1:30) {
    step <- solve(chess(nll, x), cgrad(nll, x))
    # near the maximum the likelihood is flat to rounding: trust the gradient's zero
    if (max(abs(step)) > 1e-4 && !(nll(x - step) <= nll(x))) break
    x <- x - step
    if (max(abs(step)) < 1e-11) break
  }
  list(par = x, value = nll(x), cov = solve(chess(nll, x)))
}

fit_case <- function(case, t, d, e) {
  m <- mean(log(t)); ls <- log(sd(log(t)))
  gg <- maximise(function(th) -gg_loglik(th, t, d, e),
                 list(c(m, ls, 1), c(m, ls, 0.01), c(m, ls, -0.5), c(m, ls, exp(ls))))
  put(case, "gengamma_theta", gg$par)
  put(case, "gengamma_loglik", -gg$value)
  put(case, "gengamma_se", sqrt(diag(gg$cov)))
  k0 <- 1 / var(t / mean(t))
  ga <- maximise(function(th) -gamma_loglik(th, t, d, e), list(c(log(mean(t) / k0), log(k0))))
  put(case, "gamma_theta", ga$par)
  put(case, "gamma_loglik", -ga$value)
  put(case, "gamma_se", sqrt(diag(ga$cov)))
  # nesting: Q = sigma is the gamma (shape k = Q^-2, scale exp(mu) / k)
  Q <- exp(-ga$par[2] / 2)
  nested <- gg_loglik(c(ga$par[1] + ga$par[2], log(Q), Q), t, d, e)
  stopifnot(abs(nested + ga$value) < 1e-9 * abs(ga$value))
}

lung <- rd("lung")
lung_dead <- as.numeric(lung$status == 2)
fit_case("lung", lung$time, lung_dead, numeric(nrow(lung)))
ovarian <- rd("ovarian")
fit_case("ovarian", ovarian$futime, ovarian$fustat, numeric(nrow(ovarian)))
vet <- rd("veteran")
fit_case("veteran", vet$time, vet$status, numeric(nrow(vet)))
# delayed entry: every row but each fourth enters at a fraction of its time
frac <- (seq_len(nrow(lung)) %% 4) / 5
fit_case("lung_entry", lung$time, lung_dead, lung$time * frac)

# nesting against survreg (intercept only): Q = 1 is the Weibull, Q = 0 the lognormal
for (d in c("weibull", "lognormal")) {
  fit <- survreg(Surv(time, lung_dead) ~ 1, data = lung, dist = d,
                 control = survreg.control(rel.tolerance = 1e-13))
  Q <- if (d == "weibull") 1 else 0
  ll <- gg_loglik(c(coef(fit), log(fit$scale), Q), lung$time, lung_dead, numeric(nrow(lung)))
  stopifnot(abs(ll - fit$loglik[2]) < 1e-9 * abs(ll))
  put(paste0("lung_survreg_", d), "theta", c(coef(fit), log(fit$scale)))
  put(paste0("lung_survreg_", d), "loglik", fit$loglik[2])
}

save_values("gengamma")
