"""The statistics the dbt Python models import as a package (`from predictabase.stats import reading_regression`):
the reading-time regressions (`reading_regression`), R's random number generator replayed (`r_rng`), the
cross-language design of Wilcox et al. (`xlang_design`), and the R scripts of the mixed models and the link-shape
GAMs (`fit_lmer.R`, `fit_gam_link.R`), which the models run with Rscript. None imports any other module of
predictabase."""
