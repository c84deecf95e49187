{#- The raw relation named by the project's vars <prefix>_model, <prefix>_source or <prefix>_table (exactly
    one of them), as a Relation; `what` names it in the error. Used for matches and contest results. -#}
{% macro _raw_relation(prefix, what) -%}
  {%- set model = var(prefix ~ '_model', none) -%}
  {%- set source_pair = var(prefix ~ '_source', none) -%}
  {%- set table = var(prefix ~ '_table', none) -%}
  {%- if [model, source_pair, table] | select('none') | list | length != 2 -%}
    {{ exceptions.raise_compiler_error("duckrate: set exactly one of the vars " ~ prefix ~ "_model (a model or seed name), " ~ prefix ~ "_source ([source, table]) or " ~ prefix ~ "_table ('schema.table') to the raw " ~ what) }}
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
