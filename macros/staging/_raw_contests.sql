{#- The raw contest results relation named by the project's vars (exactly one of them), as a Relation. -#}
{% macro _raw_contests() -%}
  {%- set model = var('duckrate_contests_model', none) -%}
  {%- set source_pair = var('duckrate_contests_source', none) -%}
  {%- set table = var('duckrate_contests_table', none) -%}
  {%- if [model, source_pair, table] | select('none') | list | length != 2 -%}
    {{ exceptions.raise_compiler_error("duckrate: set exactly one of the vars duckrate_contests_model (a model or seed name), duckrate_contests_source ([source, table]) or duckrate_contests_table ('schema.table') to the raw contest results") }}
  {%- endif -%}
  {%- if model is not none -%}
    {%- do return(ref(model)) -%}
  {%- elif source_pair is not none -%}
    {%- do return(source(source_pair[0], source_pair[1])) -%}
  {%- else -%}
    {%- set parts = table.split('.') -%}
    {%- do return(api.Relation.create(
          database=parts[-3] if parts | length > 2 else target.database,
          schema=parts[-2] if parts | length > 1 else target.schema,
          identifier=parts[-1])) -%}
  {%- endif -%}
{%- endmacro %}
