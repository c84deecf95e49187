{#-
  The materialization of the marts over every replay (duckrate.mart_over_replays): the model's SQL is a
  union of one part per replay; this builds the table from the first part and inserts each further part in
  turn, so DuckDB packs one replay at a time into the mart's UDF instead of all of them at once (at 10M
  matches and seven systems, 70M rows). The result is the union's, row for row. The build is one
  transaction: readers see the old table or the new one.
-#}
{% materialization duckrate_mart, adapter='duckdb' %}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set existing = load_cached_relation(this) -%}
  {%- set parts = compiled_code.split(duckrate._mart_part_separator()) -%}

  {{ run_hooks(pre_hooks, inside_transaction=False) }}
  {{ run_hooks(pre_hooks, inside_transaction=True) }}

  {%- if existing is not none and existing.type != 'table' -%}
    {{ adapter.drop_relation(existing) }}
  {%- endif -%}
  {% call statement('main') -%}
    {%- for part in parts %}
      {%- if loop.first %}
    create or replace table {{ target_relation }} as {{ part }};
      {%- else %}
    insert into {{ target_relation }} by name {{ part }};
      {%- endif %}
    {%- endfor %}
  {%- endcall %}

  {{ run_hooks(post_hooks, inside_transaction=True) }}
  {{ adapter.commit() }}
  {{ run_hooks(post_hooks, inside_transaction=False) }}
  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}
