# Wilcox, Pimentel, Meister, Cotterell & Levy (2023), xlang-processing analysis/analysis_link.Rmd at 73a2cd8: the
# linear vs non-linear (GAM) comparison of MECO's gaze durations, in base R + mgcv (their dplyr/tidyr steps
# written out: filter(...) drops rows where a condition is NA; drop_na() over the two ΔLL columns is
# complete.cases). Their model_cross_val as written (a formula with "bs = 'cr'" is a gam, else an lm), their four
# regression forms (the baseline fitted twice under two names), their comparison (the outlier rule as written).
# The independent computation tests/test_xlang.py checks int_link_fits against.
#
#   Rscript tests/r/wilcox_link.R <merged_data folder> <out.csv> <language code> [model ...]
#
# Writes one row per (language, model): n words, the linear and non-linear means and standard errors.
suppressPackageStartupMessages(library(mgcv))
args <- commandArgs(trailingOnly = TRUE)
folder <- args[1]
out <- args[2]
lang <- args[3]
models <- if (length(args) > 3) args[4:length(args)] else c("mgpt_sc", "mgpt_lc", "monot_30m", "monot_all")
psychometric <- "gaze_rt"

model_cross_val <- function(form, df, d_var, num_folds = 10) {
  folds <- cut(seq(1, nrow(df)), breaks = num_folds, labels = FALSE)
  estimates <- c()
  for (i in 1:num_folds) {
    testIndexes <- which(folds == i, arr.ind = TRUE)
    testData <- df[testIndexes, ]
    trainData <- df[-testIndexes, ]
    if (grepl("bs = 'cr'", form, fixed = TRUE)) {
      model <- gam(as.formula(form), data = trainData)
    } else {
      model <- lm(as.formula(form), data = trainData)
    }
    stdev <- sigma(model)
    densities <- log(dnorm(testData[[d_var]], mean = predict(model, newdata = testData), sd = stdev))
    estimates <- c(estimates, densities)
  }
  estimates
}

std.error <- function(x) sd(x) / sqrt(length(x))  # plotrix's, on a complete vector

rows <- list()
for (m in models) {
  df <- read.csv(file.path(folder, paste0(lang, ".csv")), stringsAsFactors = FALSE)
  keep <- with(df, !is.na(freq > 0 & prev_freq > 0 & prev2_freq > 0) & freq > 0 & prev_freq > 0 & prev2_freq > 0)
  df <- df[keep, ]
  df <- df[is.finite(df$freq) & is.finite(df$prev_freq) & is.finite(df$prev2_freq), ]
  df <- df[df$model == m, ]
  forms <- c(
    paste0(psychometric, " ~ te(freq, len, bs = 'cr') + te(prev_freq, prev_len, bs = 'cr')"),
    paste0(psychometric, "~ surp + prev_surp + te(freq, len, bs = 'cr') + te(prev_freq, prev_len, bs = 'cr') "),
    paste0(psychometric, " ~ te(freq, len, bs = 'cr') + te(prev_freq, prev_len, bs = 'cr')"),
    paste0(psychometric, "~ s(surp, bs = 'cr', k = 6) + s(prev_surp, bs = 'cr', k = 6) + te(freq, len, bs = 'cr') + te(prev_freq, prev_len, bs = 'cr') ")
  )
  ll <- lapply(forms, model_cross_val, df = df, d_var = psychometric)
  comp <- data.frame(dll_linear = ll[[2]] - ll[[1]], dll_nonlinear = ll[[4]] - ll[[3]])
  comp <- comp[complete.cases(comp), ]
  comp$dll_comp <- comp$dll_linear - comp$dll_nonlinear
  comp <- comp[!(abs(comp$dll_comp) > mean(comp$dll_comp) + (3 * sd(comp$dll_comp))), ]
  rows[[length(rows) + 1]] <- data.frame(
    lang = lang, model = m, n = nrow(comp),
    linear = mean(comp$dll_linear), linear_se = std.error(comp$dll_linear),
    nonlinear = mean(comp$dll_nonlinear), nonlinear_se = std.error(comp$dll_nonlinear))
}
write.csv(do.call(rbind, rows), out, row.names = FALSE)
