# The shape of the surprisal-reading time link, for the dbt model int_link_fits: Wilcox, Pimentel,
# Meister, Cotterell & Levy (2023), xlang-processing analysis/analysis_link.Rmd, with mgcv.
#
#   Rscript --vanilla fit_gam_link.R INPUT.csv WORDS.csv CURVES.csv ERRORS.csv
#
# INPUT.csv: one row per word, columns set, rt, freq, len, prev_freq, prev_len, surp, prev_surp (surprisal in
# bits), a set's rows in the order its folds are cut (file order), and optionally base: sets with the same base
# have the same rt, freq, len, prev_freq and prev_len rows, and share the baseline's fits. For each set:
#   baseline:  rt ~ te(freq, len, bs = 'cr') + te(prev_freq, prev_len, bs = 'cr')
#   linear:    rt ~ surp + prev_surp + te(freq, len, bs = 'cr') + te(prev_freq, prev_len, bs = 'cr')
#   GAM:       rt ~ s(surp, bs = 'cr', k = 6) + s(prev_surp, bs = 'cr', k = 6) + te(freq, len, bs = 'cr')
#                   + te(prev_freq, prev_len, bs = 'cr')
# each fitted by mgcv::gam (GCV, their defaults) in 10 unshuffled folds, cut(seq(1, n), breaks = 10) over the
# set's rows; every held-out row's log(dnorm(rt, predict(model), sigma(model))) (their model_cross_val: rows
# with a missing value are left out of the fit, na.omit, and their density is NA). Their script fits the
# baseline twice under two names (the same formula): here once, and once for all the sets of a base.
# The curves: each model fitted once on all of the set's rows; the surprisal term's contribution at surprisal
# 0, 0.1, ..., 20 bits minus its value at 0 (their "0 surprisal = 0 ms"), with its standard error from the
# model's Bayesian covariance Vp over the term's coefficients (for the difference from 0, so the band is 0 at
# 0). Theirs is 10 bootstrap refits, 2.5 and 97.5 % quantiles: not replayed (their random resamples).
# WORDS.csv: set, row (1-based within the set), fold, ll_baseline, ll_linear, ll_gam (nats).
# CURVES.csv: set, link (linear, gam), surprisal_bits, effect_ms, se_ms, edf (the term's effective degrees of
# freedom; 1 for the linear term).
# ERRORS.csv: set, error: a set with fewer than 100 rows, or one mgcv could not fit (its message); the others go on.
# Bases run in parallel over PREDICTABASE_R_CORES processes (default: every core). A bad input is one line on
# stderr and exit status 2.

script_dir <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE)[1]))
source(file.path(script_dir, "r_common.R"))  # fail(), read_input()

args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 4) fail("usage: Rscript fit_gam_link.R INPUT.csv WORDS.csv CURVES.csv ERRORS.csv")
if (!requireNamespace("mgcv", quietly = TRUE)) fail("R package mgcv is not installed (apt-get install r-cran-mgcv)")
suppressPackageStartupMessages({
  library(mgcv)
  library(parallel)
})

need <- c("set", "rt", "freq", "len", "prev_freq", "prev_len", "surp", "prev_surp")
d <- read_input(args[1], need, text = "set")

forms <- list(
  baseline = rt ~ te(freq, len, bs = "cr") + te(prev_freq, prev_len, bs = "cr"),
  linear = rt ~ surp + prev_surp + te(freq, len, bs = "cr") + te(prev_freq, prev_len, bs = "cr"),
  gam = rt ~ s(surp, bs = "cr", k = 6) + s(prev_surp, bs = "cr", k = 6) + te(freq, len, bs = "cr") +
    te(prev_freq, prev_len, bs = "cr")
)
K <- 10
GRID <- seq(0, 20, by = 0.1)

heldout <- function(form, x, folds) {
  ll <- rep(NA_real_, nrow(x))
  for (i in 1:K) {
    test <- which(folds == i)
    m <- gam(form, data = x[-test, ])
    ll[test] <- log(dnorm(x$rt[test], mean = predict(m, newdata = x[test, ]), sd = sigma(m)))
  }
  ll
}

curve <- function(link, x) {
  m <- gam(forms[[link]], data = x)
  cols <- if (link == "linear") which(names(coef(m)) == "surp") else grep("^s\\(surp\\)", names(coef(m)))
  at <- function(s) {
    nd <- data.frame(surp = s, prev_surp = mean(x$surp, na.rm = TRUE), freq = mean(x$freq, na.rm = TRUE),
                     len = mean(x$len, na.rm = TRUE), prev_freq = mean(x$prev_freq, na.rm = TRUE),
                     prev_len = mean(x$prev_len, na.rm = TRUE))
    predict(m, newdata = nd, type = "lpmatrix")[, cols, drop = FALSE]
  }
  X <- at(GRID)
  X <- sweep(X, 2, X[1, ])  # minus the value at 0 bits (GRID[1] = 0)
  b <- coef(m)[cols]
  V <- m$Vp[cols, cols, drop = FALSE]
  edf <- if (link == "linear") 1 else sum(m$edf[cols])
  data.frame(link = link, surprisal_bits = GRID, effect_ms = as.vector(X %*% b),
             se_ms = sqrt(pmax(rowSums((X %*% V) * X), 0)), edf = edf)
}

one_set <- function(s, ll_baseline) {
  x <- d[d$set == s, need]
  n <- nrow(x)
  folds <- cut(seq(1, n), breaks = K, labels = FALSE)
  if (is.null(ll_baseline)) ll_baseline <- heldout(forms$baseline, x, folds)
  words <- data.frame(set = s, row = seq_len(n), fold = folds, ll_baseline = ll_baseline,
                      ll_linear = heldout(forms$linear, x, folds),
                      ll_gam = heldout(forms$gam, x, folds))
  curves <- rbind(curve("linear", x), curve("gam", x))
  list(words = words, curves = cbind(set = s, curves))
}

# Sets with the same `base` have the same rows of rt, freq, len, prev_freq and prev_len (the caller says so:
# the same words, another model's surprisal), so the same baseline fits (na.omit drops a row only for the
# formula's own variables): fitted once per base.
one_base <- function(b) {
  sets <- unique(d$set[d$base == b])
  out <- list()
  errors <- data.frame(set = character(0), error = character(0))
  ll <- NULL
  for (s in sets) {
    n <- sum(d$set == s)
    r <- if (n < 10 * K) sprintf("%d words, fewer than %d", n, 10 * K) else
      tryCatch(one_set(s, ll), error = function(e) conditionMessage(e))
    if (is.character(r)) {  # a set mgcv cannot fit is reported, the others go on
      errors <- rbind(errors, data.frame(set = s, error = gsub("[\r\n]+", " ", r)))
      next
    }
    ll <- r$words$ll_baseline
    out[[length(out) + 1]] <- r
  }
  list(words = do.call(rbind, lapply(out, `[[`, "words")), curves = do.call(rbind, lapply(out, `[[`, "curves")),
       errors = errors)
}

if (!("base" %in% names(d))) d$base <- d$set
bases <- unique(d$base)
cores <- suppressWarnings(as.integer(Sys.getenv("PREDICTABASE_R_CORES", "")))
if (is.na(cores) || cores < 1) cores <- detectCores()
res <- mclapply(bases, one_base, mc.cores = min(cores, length(bases)), mc.preschedule = FALSE)
for (r in res) {
  if (inherits(r, "try-error")) fail("%s", as.character(r))  # a worker that died (out of memory, say)
}
empty <- list(words = data.frame(set = character(0), row = integer(0), fold = integer(0), ll_baseline = numeric(0),
                                 ll_linear = numeric(0), ll_gam = numeric(0)),
              curves = data.frame(set = character(0), link = character(0), surprisal_bits = numeric(0),
                                  effect_ms = numeric(0), se_ms = numeric(0), edf = numeric(0)))
for (part in c("words", "curves", "errors")) {
  rows <- do.call(rbind, c(list(if (part == "errors") data.frame(set = character(0), error = character(0)) else
    empty[[part]]), lapply(res, `[[`, part)))
  write.csv(rows, args[match(part, c("words", "curves", "errors")) + 1], row.names = FALSE)
}
