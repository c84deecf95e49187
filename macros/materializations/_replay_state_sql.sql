{#- The state table of a <system>_replay_and_state result: its duckrate_state rows, as columns. -#}
{% macro _replay_state_sql(computed) -%}
  select unnest(duckrate_state) from {{ computed }} where duckrate_state is not null
{%- endmacro %}
