# What the R scripts of the dbt Python models share (fit_lmer.R, fit_gam_link.R): a bad input is one line on
# stderr and exit status 2, never an R traceback. Each script sources this file from its own folder.

fail <- function(...) {
  message(sprintf(...))
  quit(save = "no", status = 2)
}

# The CSV at `path` with the columns `need` (those not in `text` numeric, or empty throughout), and a row at least.
read_input <- function(path, need, text = character(0)) {
  d <- tryCatch(read.csv(path, stringsAsFactors = FALSE), error = function(e) fail("%s: %s", path, conditionMessage(e)))
  missing <- setdiff(need, names(d))
  if (length(missing) > 0) fail("%s: missing column(s) %s", path, paste(missing, collapse = ", "))
  for (col in setdiff(need, text)) {
    if (!is.numeric(d[[col]]) && !all(is.na(d[[col]]))) fail("%s: column %s is not numeric", path, col)
  }
  if (nrow(d) == 0) fail("%s: no rows", path)
  d
}
