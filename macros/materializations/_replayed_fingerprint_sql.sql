{#- n and an order-independent fingerprint (sum of row hashes) of the input rows already in the replay table:
    those whose ``key`` (match_id, or contest_id for a contest replay) it holds; every input row when
    ``replay_relation`` is none (right after a full replay, which replays them all). -#}
{% macro _replayed_fingerprint_sql(replay_relation, input_view, key='match_id') -%}
  select count(*) as n, coalesce(sum(hash(i)), 0)::HUGEINT as fingerprint
  from {{ input_view }} as i
  {%- if replay_relation is not none %}
  where i.{{ key }} in (select r.{{ key }} from {{ replay_relation }} as r)
  {%- endif %}
{%- endmacro %}
