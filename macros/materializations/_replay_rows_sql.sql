{#- The replay rows of a <system>_replay_and_state result (rows that only carry state have no seq). -#}
{% macro _replay_rows_sql(computed) -%}
  select * exclude (duckrate_state) from {{ computed }} where seq is not null
{%- endmacro %}
