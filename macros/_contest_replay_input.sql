{#- The SQL of an incremental contest replay model (Elo-MMR): its input, the canonical contest_results
    columns of ``relation``. -#}
{% macro _contest_replay_input(relation) -%}
  select contest_id, played_at, player, rank, league, weight from {{ relation }}
{%- endmacro %}
