{# Why a scoreboard cell (mart_scoreboard_long) has no value, in words: an expression over the cells CTE's
   columns (predictor, predictor_kind, comparison, comparison_family, corpus_title, definition, is_scored,
   has_imported_tokens, has_imported_words, imported_corpora, value_families, sibling_has_value). #}
{% macro scoreboard_null_reason() -%}
case
    when comparison_family = 'bits_per_byte' then case
        when predictor = 'humans' then 'Humans give no probability to every token of a text; their perplexity is estimated in the pairwise game instead.'
        when is_scored then 'No complete scoring run of this model on ' || corpus_title || ': add the corpus to its models.toml entry and run predictabase refresh.'
        when has_imported_tokens then 'Its imported token log-probabilities cover ' || coalesce(imported_corpora, 'other corpora') || ' only.'
        when has_imported_words then 'Imported as published word surprisals on the reading-time words, not as token log-probabilities of whole texts.'
        else 'The LM-game authors report only its game results, no log-probabilities of texts.' end
    when comparison_family = 'top1_accuracy' then case
        when predictor = 'humans' then 'No top-1 game answers in this warehouse (ingest the lm_game source).'
        when is_scored and comparison = 'top1_accuracy_token' and list_contains(value_families, 'top1_accuracy')
            then 'Its tokenizer is not the game''s GPT-2 tokenizer, so it cannot answer the token questions; its next-word accuracy is the comparable figure.'
        when is_scored then 'Not run on the top-1 game: set top1 = true in its models.toml entry and run predictabase refresh.'
        when predictor_kind = 'reference' then 'The LM-game authors report no accuracy of this model on '
            || case comparison when 'top1_accuracy_token' then 'all questions.' else 'the whole-word questions.' end
        else 'Imported scores hold no predictions at the game''s questions.' end
    when comparison_family = 'pairwise_perplexity' then case
        when predictor = 'humans' then 'No pairwise-game answers in this warehouse (ingest the pairwise source).'
        when predictor_kind = 'reference' then 'Not in the LM-game authors'' pairwise comparison files (they hold GPT-2 small, GPT-2 medium and their 2-layer model).'
        else 'Not computed: the estimate needs the model''s probabilities of the game''s GPT-2-token candidates, which only the LM-game authors'' comparison files hold (for GPT-2 small, GPT-2 medium and their 2-layer model).' end
    when comparison_family = 'cloze_agreement' then case
        when predictor = 'humans' then 'The humans'' own responses are the target here (their most common next word).'
        when is_scored then 'Not run on the cloze responses: set cloze = true in its models.toml entry and run predictabase refresh.'
        else 'Needs the model''s probability of every human response; only models scored here have it.' end
    when comparison_family in ('pnc', 'delta_loglik') then case
        when predictor = 'humans' and comparison_family = 'pnc' then 'PNC correlates a model''s surprisal with the humans'' cloze surprisal; for humans it is 1 by definition.'
        when predictor = 'humans' then 'Not computed: the regressions take a model''s word surprisal; cloze surprisal is not fitted as a predictor here.'
        when predictor_kind = 'reference' then 'The LM-game authors publish no word surprisals of this model.'
        when definition = 'wt' and sibling_has_value and not is_scored
            then 'Published as leading-whitespace (LW) surprisals only: without the boundary probabilities there is no WT surprisal.'
        when is_scored then 'No word surprisals of this model on ' || corpus_title || ': add the corpus to its models.toml entry and run predictabase refresh.'
        else 'Its imported word surprisals do not cover ' || corpus_title || '.' end
    when comparison_family in ('temperature_gain', 'word_entropy_gain') then case
        when predictor = 'humans' then 'Not computed: it needs a model''s probability of every possible next token.'
        when is_scored and comparison_family = 'temperature_gain' then 'Not run: set temperature = true in its models.toml entry and run predictabase refresh (or predictabase temperature -c ' || corpus || ').'
        when is_scored then 'Not estimated: set entropy = true in its models.toml entry and run predictabase refresh (or predictabase entropy -c ' || corpus || ').'
        when predictor_kind = 'reference' then 'The LM-game authors publish no distributions of this model.'
        else 'Needs the model''s distribution over its vocabulary at every word; only models scored here have it.' end
    else 'Not available.'
end
{%- endmacro %}

{# The comparisons of the wide mart_scoreboard (one column group each): those of the shipped corpora, fixed so the
   mart has a contract, made from the declarations by predictabase.warehouse.scoreboard_contract (which writes the
   contract's columns too). A user's corpus adds rows to mart_scoreboard_long only. #}
{% macro scoreboard_wide_comparisons() -%}
{{ return(declarations()['scoreboard_wide']) }}
{%- endmacro %}
