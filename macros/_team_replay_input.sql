{#- The SQL of an incremental team replay model: its input, the canonical team_results columns of ``relation``
    (stg_team_results). Each match is given by its ranks when every row of it has one, else by its scores
    (staging rejects a match that gives a rank or a score on some rows only), so one table may hold matches
    of both kinds and the replay reads each as given: a margin reads the scores of the matches given by them. -#}
{% macro _team_replay_input(relation) -%}
  select match_id, played_at, team, player, rank, score, league, weight from {{ relation }}
{%- endmacro %}
