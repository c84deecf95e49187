{#- The SQL of an incremental replay model: its input matches, the canonical columns of ``relation``. -#}
{% macro _replay_input(relation) -%}
  select match_id, played_at, player_a, player_b, score_a, league, weight, period from {{ relation }}
{%- endmacro %}
