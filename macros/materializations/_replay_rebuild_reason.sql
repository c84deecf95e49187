{#- Why the replay model must replay its whole input (see the duckrate_replay materialization), or none
    when it can continue from its saved state. -#}
{% macro _replay_rebuild_reason(system, params, existing, state_relation, build_relation, input_view, key='match_id') -%}
  {%- if should_full_refresh() -%}{{ return('a full refresh was requested') }}{%- endif -%}
  {%- if not var('duckrate_incremental', true) -%}{{ return('var duckrate_incremental is false') }}{%- endif -%}
  {%- if existing is none -%}{{ return('first build') }}{%- endif -%}
  {%- if load_cached_relation(state_relation) is none or load_cached_relation(build_relation) is none
        or adapter.get_relation(state_relation.database, state_relation.schema, state_relation.identifier) is none
        or adapter.get_relation(build_relation.database, build_relation.schema, build_relation.identifier) is none -%}
    {{ return('no saved state') }}
  {%- endif -%}
  {%- set same = run_query(
        'select (select count(*) from ' ~ existing ~ ') = b.n_matches and f.n = b.n_matches and f.fingerprint = b.fingerprint'
        ~ ' from ' ~ build_relation ~ ' as b, (' ~ duckrate._replayed_fingerprint_sql(existing, input_view, key) ~ ') as f') -%}
  {%- if not (same.rows | length) or not same.columns[0].values()[0] -%}
    {{ return(('contests' if key == 'contest_id' else 'matches') ~ ' already replayed have changed or been removed') }}
  {%- endif -%}
  {#- the parameters of the last build (a record written before they were kept has none: replay) -#}
  {%- set recorded = run_query('select * from ' ~ build_relation) -%}
  {%- set saved = recorded.columns['params'].values()[0] if 'params' in recorded.column_names else none -%}
  {%- if saved != tojson(params or {}, sort_keys=true) -%}
    {{ return('the parameters differ from those of the last build') }}
  {%- endif -%}
  {{ return(none) }}
{%- endmacro %}
