-- Cloze probability, surprisal and entropy per corpus word with cloze norms: int_cloze, published as is (the models
-- that use the norms, mart_corpora, mart_words_export and int_pnc, read the int model). See _mart_cloze__models.yml
-- for the definitions and the smoothing rules.
select * from {{ ref('int_cloze') }}
