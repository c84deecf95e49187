{#- Replace <model>__build: the fingerprint of the replayed input rows (matches or contest results), the
    parameters they were replayed with (as JSON) and how this build went (mode, reason, and the seconds it took
    until this record). -#}
{% macro _replay_build_record(replay_relation, build_relation, input_view, mode, reason, key='match_id', seconds=none, params=none) -%}
  create or replace table {{ build_relation }} as
  select f.n as n_matches, f.fingerprint, {{ duckrate._sql_literal(mode) }} as mode,
         {{ duckrate._sql_literal(reason) }}::VARCHAR as reason, {{ duckrate._sql_literal(seconds) }}::DOUBLE as seconds,
         {{ duckrate._sql_literal(tojson(params or {}, sort_keys=true)) }}::VARCHAR as params
  from ({{ duckrate._replayed_fingerprint_sql(replay_relation, input_view, key) }}) as f
{%- endmacro %}
