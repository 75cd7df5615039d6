# Shared by the reference scripts: collect (case, quantity, value) rows, write them at full precision.
# A script does:  source(file.path(dirname(script), "common.R")); put("case", "quantity", value); save_values("topic")
suppressPackageStartupMessages(library(survival))
.args <- commandArgs(trailingOnly = TRUE)
OUT <- if (length(.args)) .args[1] else "tests/reference/r"
DATA <- "tests/reference/r/data"
.rows <- list()
put <- function(case, quantity, value) {
  value <- as.numeric(value)
  names <- if (length(value) > 1) paste0(quantity, "[", seq_along(value), "]") else quantity
  for (i in seq_along(value)) {
    .rows[[length(.rows) + 1]] <<- data.frame(case = case, quantity = names[i],
                                              value = sprintf("%.17g", value[i]))
  }
}
save_values <- function(topic) {
  dir.create(OUT, showWarnings = FALSE, recursive = TRUE)
  rows <- do.call(rbind, .rows)
  write.csv(rows, file.path(OUT, paste0(topic, "_values.csv")), row.names = FALSE, quote = TRUE)
}
