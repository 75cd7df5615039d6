# Export R's own survival datasets to CSV for reliab's tests (R as the oracle).
# Run from the repository root:  Rscript tests/reference/r/datasets.R [OUTDIR]
# Data: R package 'survival' (Therneau), LGPL (>= 2); see SOURCE.md beside this file.
suppressPackageStartupMessages(library(survival))
args <- commandArgs(trailingOnly = TRUE)
out <- if (length(args)) args[1] else "tests/reference/r/data"
dir.create(out, showWarnings = FALSE, recursive = TRUE)
for (name in c("lung", "veteran", "colon", "pbc", "cgd", "bladder", "mgus2", "rats", "ovarian")) {
  x <- get(name)
  # factors as their labels, NA as an empty cell, numbers at full precision
  write.csv(x, file.path(out, paste0(name, ".csv")), row.names = FALSE, na = "")
}
