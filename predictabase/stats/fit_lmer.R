# Oh & Schuler's (2024) LMER (sec. 4.1) for the dbt model int_delta_loglik_lmer.
#
#   Rscript --vanilla fit_lmer.R INPUT.csv OUTPUT.csv SET1,SET2,...
#
# INPUT.csv: one row per reading with columns subject, item, rt, length, index, freq, freq_prev1, freq_prev2
# and, for every predictor set S named on the command line, surp__S, surp_prev1__S, surp_prev2__S.
# For each set: the rows with no missing value, then by maximum likelihood (REML = FALSE)
#   baseline: rt ~ ns(length, 3) + freq + freq_prev1 + freq_prev2 + ns(index, 3) + (1 | subject) + (1 | item)
#   full:     baseline + surp + surp_prev1 + surp_prev2
# s() of the paper is read as a natural cubic spline basis with 3 degrees of freedom (splines::ns), which
# keeps the model an LMER as printed. The baseline is refitted only when a set's rows differ from the last.
# OUTPUT.csv: set, n_obs, n_subjects, n_items, loglik_baseline, loglik_full, delta_ll_total, converged, warning.
# A bad input is one line on stderr and exit status 2.

script_dir <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
source(file.path(script_dir, "r_common.R"))  # fail(), read_input()

args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 3) fail("usage: Rscript fit_lmer.R INPUT.csv OUTPUT.csv SET1,SET2,...")
if (!requireNamespace("lme4", quietly = TRUE)) fail("R package lme4 is not installed (apt-get install r-cran-lme4)")
suppressPackageStartupMessages({
  library(lme4)
  library(splines)
})

need <- c("subject", "item", "rt", "length", "index", "freq", "freq_prev1", "freq_prev2")
sets <- strsplit(args[3], ",", fixed = TRUE)[[1]]
surp_cols <- as.vector(outer(c("surp", "surp_prev1", "surp_prev2"), sets, paste, sep = "__"))
d <- read_input(args[1], c(need, surp_cols), text = c("subject", "item"))

base_formula <- rt ~ ns(length, df = 3) + freq + freq_prev1 + freq_prev2 + ns(index, df = 3) +
  (1 | subject) + (1 | item)
full_formula <- update(base_formula, . ~ . + surp + surp_prev1 + surp_prev2)

fit <- function(formula, data) {
  warnings <- character(0)
  m <- withCallingHandlers(
    lmer(formula, data = data, REML = FALSE),
    warning = function(w) {
      warnings <<- c(warnings, conditionMessage(w))
      invokeRestart("muffleWarning")
    })
  list(model = m, warnings = warnings)
}

out <- data.frame()
last_rows <- NULL
base <- NULL
for (s in sets) {
  cols <- paste(c("surp", "surp_prev1", "surp_prev2"), s, sep = "__")
  ok <- complete.cases(d[, c(need, cols)])
  if (sum(ok) < 10) fail("%s: set %s has %d complete rows", args[1], s, sum(ok))
  x <- d[ok, need]
  x$subject <- factor(x$subject)
  x$item <- factor(x$item)
  x$surp <- d[[cols[1]]][ok]
  x$surp_prev1 <- d[[cols[2]]][ok]
  x$surp_prev2 <- d[[cols[3]]][ok]
  if (is.null(last_rows) || !identical(ok, last_rows)) {
    base <- fit(base_formula, x)
    last_rows <- ok
  }
  full <- fit(full_formula, x)
  ll0 <- as.numeric(logLik(base$model))
  ll1 <- as.numeric(logLik(full$model))
  w <- unique(c(base$warnings, full$warnings))
  out <- rbind(out, data.frame(
    set = s, n_obs = nrow(x), n_subjects = nlevels(x$subject), n_items = nlevels(x$item),
    loglik_baseline = ll0, loglik_full = ll1, delta_ll_total = ll1 - ll0,
    converged = length(w) == 0, warning = gsub("[\r\n]+", " ", paste(w, collapse = "; "))))
}
write.csv(out, args[2], row.names = FALSE)
