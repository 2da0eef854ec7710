# Wilcox, Meister, Cotterell & Pimentel (2023), xlang-processing analysis/analysis_surp.Rmd at 73a2cd8: their
# delta log-likelihood of MECO's eye-tracking means, in base R (their dplyr/tidyr steps written out: filter(...)
# drops rows where a condition is NA, drop_na() is complete.cases over every column). The independent computation
# tests/test_xlang.py checks int_xlang_delta_loglik against.
#
#   Rscript tests/r/wilcox_dll.R <merged_data folder> <out.csv> [language codes ...]
#
# Writes one row per (language, model, measure, comparison: surprisal over the baseline, analysis_surp.Rmd;
# entropy added to surprisal and entropy in place of it, against the surprisal model, analysis_ent.Rmd): n words, the mean of the per-word ΔLL (nats), its standard error
# (sd / sqrt(n), plotrix's std.error) and the mean of each of the 10 folds.
args <- commandArgs(trailingOnly = TRUE)
folder <- args[1]
out <- args[2]
langs <- if (length(args) > 2) args[3:length(args)] else c("du", "en", "fi", "ge", "gr", "he", "it", "ko", "sp", "tr", "ru")
psychometrics <- c("total_rt", "gaze_rt", "firstfix_rt")
models <- c("mgpt_sc", "mgpt_lc", "monot_30m", "monot_all")

model_cross_val <- function(form, df, d_var, num_folds = 10) {
  folds <- cut(seq(1, nrow(df)), breaks = num_folds, labels = FALSE)
  estimates <- c()
  for (i in 1:num_folds) {
    testIndexes <- which(folds == i, arr.ind = TRUE)
    testData <- df[testIndexes, ]
    trainData <- df[-testIndexes, ]
    model <- lm(as.formula(form), data = trainData)
    stdev <- sigma(model)
    densities <- log(dnorm(testData[[d_var]], mean = predict(model, newdata = testData), sd = stdev))
    estimates <- c(estimates, densities)
  }
  list(estimates = estimates, folds = folds)
}

rows <- list()
for (lang in langs) {
  df <- read.csv(file.path(folder, paste0(lang, ".csv")))
  keep <- with(df, !is.na(freq > 0 & prev_freq > 0 & prev2_freq > 0) & freq > 0 & prev_freq > 0 & prev2_freq > 0)
  df <- df[keep, ]
  df <- df[is.finite(df$freq) & is.finite(df$prev_freq) & is.finite(df$prev2_freq), ]
  for (m in models) {
    df_eval <- df[df$model == m, ]
    df_eval <- df_eval[complete.cases(df_eval), ]
    for (psychometric in psychometrics) {
      # analysis_surp.Rmd: surprisal over the baseline; analysis_ent.Rmd: entropy added to surprisal ("add") and
      # in place of it ("replace"), each against the surprisal model (their "baseline" there)
      forms <- list(
        base = " ~ freq + len + prev_freq + prev_len + prev2_freq + prev2_len",
        surp = " ~ surp + prev_surp + prev2_surp + freq + len + prev_freq + prev_len + prev2_freq + prev2_len",
        add = " ~ ent + prev_ent + prev2_ent + surp + prev_surp + prev2_surp + freq + len + prev_freq + prev_len + prev2_freq + prev2_len",
        replace = " ~ ent + prev_ent + prev2_ent + freq + len + prev_freq + prev_len + prev2_freq + prev2_len")
      ll <- lapply(forms, function(f) model_cross_val(paste0(psychometric, f), df_eval, psychometric))
      for (comp in list(c("surprisal", "surp", "base"), c("entropy_added", "add", "surp"),
                        c("entropy_replaces", "replace", "surp"))) {
        dll <- ll[[comp[2]]]$estimates - ll[[comp[3]]]$estimates
        ok <- !is.na(dll)
        folds <- ll[[comp[2]]]$folds[ok]
        dll <- dll[ok]
        fold_means <- sapply(1:10, function(i) mean(dll[folds == i]))
        rows[[length(rows) + 1]] <- data.frame(
          lang = lang, model = m, psychometric = psychometric, comparison = comp[1], n = length(dll),
          mean = mean(dll), se = sd(dll) / sqrt(length(dll)),
          fold_means = paste(sprintf("%.17g", fold_means), collapse = ";"))
      }
    }
  }
}
res <- do.call(rbind, rows)
res$mean <- sprintf("%.17g", res$mean)
res$se <- sprintf("%.17g", res$se)
write.csv(res, out, row.names = FALSE)
