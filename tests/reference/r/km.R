# Kaplan-Meier, Nelson-Aalen, quantiles with Brookmeyer-Crowley limits, log-rank / G-rho and RMST
# computed by R's survival package on its own datasets.  Run from the repository root:
#   Rscript tests/reference/r/km.R            (writes tests/reference/r/km_values.csv)
script <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
source(file.path(dirname(script), "common.R"))
rd <- function(name) read.csv(file.path(DATA, paste0(name, ".csv")))
num <- function(x) { x <- as.numeric(x); x[is.na(x)] <- NaN; x }
PROBS <- c(0.25, 0.5, 0.75)

lung <- rd("lung")
lung$death <- as.integer(lung$status == 2)
lung_ecog <- lung[!is.na(lung$ph.ecog), ]
veteran <- rd("veteran")
ovarian <- rd("ovarian")
colon <- rd("colon")
colon <- colon[colon$etype == 2, ]
pbc <- rd("pbc")
pbc$death <- as.integer(pbc$status == 2)

# one curve: every row of survfit, the three interval types, quantiles with their limits
curve <- function(case, time, event, data, entry = NULL) {
  for (ct in c("log", "log-log", "plain")) {
    f <- if (is.null(entry)) survfit(Surv(data[[time]], data[[event]]) ~ 1, conf.type = ct)
         else survfit(Surv(data[[entry]], data[[time]], data[[event]]) ~ 1, conf.type = ct)
    if (ct == "log") {
      put(case, "time", f$time)
      put(case, "n.risk", f$n.risk)
      put(case, "n.event", f$n.event)
      put(case, "surv", f$surv)
      put(case, "std.err", num(f$std.err))            # sd of log S (Greenwood), survfit's own
      put(case, "summary.std.err", num(summary(f)$std.err))  # sd of S at event times, as printed
      put(case, "cumhaz", f$cumhaz)                   # Nelson-Aalen
      put(case, "std.chaz", f$std.chaz)
    }
    put(case, paste0("lower.", ct), num(f$lower))
    put(case, paste0("upper.", ct), num(f$upper))
    q <- quantile(f, PROBS)
    put(case, paste0("quantile.", ct), num(q$quantile))
    put(case, paste0("quantile.lower.", ct), num(q$lower))
    put(case, paste0("quantile.upper.", ct), num(q$upper))
  }
}
curve("lung", "time", "death", lung)
curve("ovarian", "futime", "fustat", ovarian)
curve("veteran", "time", "status", veteran)
curve("pbc", "time", "death", pbc)
for (s in 1:2) curve(paste0("lung.sex", s), "time", "death", lung[lung$sex == s, ])
for (r in sort(unique(colon$rx))) curve(paste0("colon.", r), "time", "status", colon[colon$rx == r, ])
# delayed entry (left truncation): lung patients entering at min(time - 1, 60) days
lung$entry <- pmin(lung$time - 1, 60)
curve("lung.entry", "time", "death", lung, entry = "entry")
for (g in 0:3) curve(paste0("lung.ecog", g), "time", "death", lung_ecog[lung_ecog$ph.ecog == g, ])

# log-rank (rho = 0) and Peto-Peto / Fleming-Harrington G-rho (rho = 1), k groups, stratified
test <- function(case, fit) {
  put(case, "chisq", fit$chisq)
  put(case, "df", length(fit$n) - 1)
  put(case, "p", pchisq(fit$chisq, length(fit$n) - 1, lower.tail = FALSE))
  put(case, "obs", if (is.matrix(fit$obs)) rowSums(fit$obs) else fit$obs)
  put(case, "exp", if (is.matrix(fit$exp)) rowSums(fit$exp) else fit$exp)
}
for (rho in c(0, 1, 0.5)) {
  test(paste0("lung.sex.rho", rho), survdiff(Surv(time, death) ~ sex, data = lung, rho = rho))
  test(paste0("veteran.celltype.rho", rho), survdiff(Surv(time, status) ~ celltype, data = veteran, rho = rho))
  test(paste0("colon.rx.rho", rho), survdiff(Surv(time, status) ~ rx, data = colon, rho = rho))
  test(paste0("lung.ecog.rho", rho), survdiff(Surv(time, death) ~ ph.ecog, data = lung_ecog, rho = rho))
  test(paste0("veteran.trt.strata.rho", rho),
       survdiff(Surv(time, status) ~ trt + strata(celltype), data = veteran, rho = rho))
  test(paste0("lung.sex.strata.rho", rho),
       survdiff(Surv(time, death) ~ sex + strata(ph.ecog), data = lung_ecog, rho = rho))
}

# restricted mean survival time to tau and its standard error (print.survfit's rmean)
rmst <- function(case, time, event, data, group, tau) {
  f <- survfit(Surv(data[[time]], data[[event]]) ~ data[[group]])
  tb <- summary(f, rmean = tau)$table
  put(case, "rmean", tb[, "rmean"])
  put(case, "se", tb[, "se(rmean)"])
  put(case, "diff", tb[2, "rmean"] - tb[1, "rmean"])
  put(case, "diff.se", sqrt(tb[1, "se(rmean)"]^2 + tb[2, "se(rmean)"]^2))
  f1 <- survfit(Surv(data[[time]], data[[event]]) ~ 1)
  t1 <- summary(f1, rmean = tau)$table
  put(case, "all.rmean", t1["rmean"])
  put(case, "all.se", t1["se(rmean)"])
}
rmst("lung.sex.365", "time", "death", lung, "sex", 365)
rmst("lung.sex.800", "time", "death", lung, "sex", 800)
rmst("veteran.trt.200", "time", "status", veteran, "trt", 200)
rmst("ovarian.rx.1000", "futime", "fustat", ovarian, "rx", 1000)
# tau beyond the last time (lung 1022 days, ovarian 1227): the curve is carried flat to tau
rmst("lung.sex.1100", "time", "death", lung, "sex", 1100)
rmst("ovarian.rx.1300", "futime", "fustat", ovarian, "rx", 1300)
save_values("km")
