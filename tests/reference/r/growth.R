# Reverse arrangement (trend) test with tied gaps: Kendall's tau between the inter-arrival
# times and their order, normal approximation with the tie-corrected variance of S
# (Kendall 1970, Rank Correlation Methods, 4th ed., ch. 4), as R's cor.test computes it.
# Run from the repository root:
#   Rscript tests/reference/r/growth.R        (writes tests/reference/r/growth_values.csv)
script <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
source(file.path(dirname(script), "common.R"))

# integer gaps with many ties and a mild downward trend (80 failures: the normal branch)
i <- 1:80
gaps <- 1 + (i * 37) %% 11 + (80 - i) %/% 16
put("ties80", "gap", gaps)
for (cc in c(TRUE, FALSE)) {
  ct <- suppressWarnings(cor.test(gaps, i, method = "kendall", exact = FALSE, continuity = cc))
  tag <- if (cc) "continuity" else "nocontinuity"
  put("ties80", paste0("z.", tag), ct$statistic)
  put("ties80", paste0("p.", tag), ct$p.value)
}
# no ties (the untied variance n(n-1)(2n+5)/18 of S): a permutation of 1..70
g2 <- (1:70 * 29) %% 71  # values 1..70, all distinct
ct <- cor.test(g2, 1:70, method = "kendall", exact = FALSE, continuity = TRUE)
put("perm70", "gap", g2)
put("perm70", "p.continuity", ct$p.value)
save_values("growth")
