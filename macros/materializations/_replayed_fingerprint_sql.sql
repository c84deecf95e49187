{#- n and an order-independent fingerprint (sum of row hashes) of the input matches already in the replay table. -#}
{% macro _replayed_fingerprint_sql(replay_relation, input_view) -%}
  select count(*) as n, coalesce(sum(hash(i)), 0)::HUGEINT as fingerprint
  from {{ input_view }} as i
  where i.match_id in (select r.match_id from {{ replay_relation }} as r)
{%- endmacro %}
