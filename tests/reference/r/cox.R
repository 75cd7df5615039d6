# Reference values of Cox regression (R survival coxph, basehaz, survfit.coxph, residuals,
# concordance, cox.zph) on R's own datasets.  Run from the repository root:
#   Rscript tests/reference/r/cox.R [output folder]
# Covariates are numeric columns built here so the Python side can rebuild them identically.
source(file.path("tests/reference/r", "common.R"))
rd <- function(name) read.csv(file.path(DATA, paste0(name, ".csv")))
# Newton iterations run to a 1e-13 relative change of the log-likelihood (R's default 1e-9 leaves
# the coefficients 1e-8 from the maximum); reliab iterates to a 1e-10 step.
CTL <- coxph.control(eps = 1e-13, toler.chol = 1e-15, iter.max = 100)

fitted_values <- function(case, fit) {
  put(case, "coef", coef(fit))
  put(case, "se", sqrt(diag(if (is.null(fit$naive.var)) fit$var else fit$naive.var)))
  if (!is.null(fit$naive.var)) put(case, "robust_se", sqrt(diag(fit$var)))
  put(case, "loglik", fit$loglik)
  put(case, "concordance", fit$concordance[["concordance"]])
}

# lung: NAs in ph.ecog dropped as coxph does; status 2 = dead
lung <- rd("lung")
lung$dead <- as.numeric(lung$status == 2)
lung <- lung[!is.na(lung$ph.ecog), ]
lung$w <- 1 + (seq_len(nrow(lung)) %% 3) / 2
lung$off <- (seq_len(nrow(lung)) %% 5) / 10
for (ties in c("efron", "breslow")) {
  fit <- coxph(Surv(time, dead) ~ age + sex + ph.ecog, lung, ties = ties, control = CTL)
  case <- paste0("lung_", ties)
  fitted_values(case, fit)
  put(case, "martingale", residuals(fit, "martingale"))
  put(case, "deviance", residuals(fit, "deviance"))
  put(case, "score", residuals(fit, "score")[, "age"])
  sch <- residuals(fit, "schoenfeld")
  put(case, "schoenfeld_age", sch[, "age"])
  put(case, "scaled_schoenfeld_ecog", residuals(fit, "scaledsch")[, "ph.ecog"])
  bh <- basehaz(fit, centered = FALSE)
  sf <- survfit(fit, newdata = data.frame(age = 60, sex = 2, ph.ecog = 1))
  keep <- sf$n.event > 0
  put(case, "basehaz", bh$hazard[keep])
  put(case, "basehaz_time", bh$time[keep])
  put(case, "surv_new", sf$surv[keep])
  zp <- cox.zph(fit)
  put(case, "zph_chisq", zp$table[, "chisq"])
  put(case, "zph_rank_chisq", cox.zph(fit, transform = "rank")$table[, "chisq"])
  put(case, "zph_identity_chisq", cox.zph(fit, transform = "identity")$table[, "chisq"])
}
fit <- coxph(Surv(time, dead) ~ age + sex + ph.ecog + offset(off), lung, weights = w,
             robust = TRUE, control = CTL)
fitted_values("lung_weights_offset", fit)

# ovarian: small, tie-free apart from none; efron vs breslow
ovarian <- rd("ovarian")
for (ties in c("efron", "breslow")) {
  fit <- coxph(Surv(futime, fustat) ~ age + ecog.ps + rx, ovarian, ties = ties, control = CTL)
  fitted_values(paste0("ovarian_", ties), fit)
}

# veteran: the proportional-hazards test (survival >= 3.0 score test), celltype dummy-coded
vet <- rd("veteran")
for (lv in c("large", "smallcell", "squamous")) vet[[lv]] <- as.numeric(vet$celltype == lv)
fit <- coxph(Surv(time, status) ~ trt + karno + diagtime + age + prior + large + smallcell +
               squamous, vet, control = CTL)
fitted_values("veteran", fit)
put("veteran", "zph_chisq", cox.zph(fit)$table[, "chisq"])

# cgd: recurrent infections, (tstart, tstop], strata and cluster(id)
cgd <- rd("cgd")
cgd$rifn <- as.numeric(cgd$treat == "rIFN-g")
cgd$male <- as.numeric(cgd$sex == "male")
for (ties in c("efron", "breslow")) {
  fit <- coxph(Surv(tstart, tstop, status) ~ rifn + male + age + steroids + strata(hos.cat) +
                 cluster(id), cgd, ties = ties, control = CTL)
  case <- paste0("cgd_hoscat_", ties)
  fitted_values(case, fit)
  put(case, "martingale", residuals(fit, "martingale"))
  put(case, "zph_chisq", cox.zph(fit)$table[, "chisq"])
}
fit <- coxph(Surv(tstart, tstop, status) ~ rifn + male + age + steroids + strata(center) +
               cluster(id), cgd, ties = "efron", control = CTL)
fitted_values("cgd_center_efron", fit)

# bladder: WLW marginal model, strata(enum), cluster(id)
bladder <- rd("bladder")
fit <- coxph(Surv(stop, event) ~ rx + number + size + strata(enum) + cluster(id), bladder, control = CTL)
fitted_values("bladder_wlw", fit)

save_values("cox")
