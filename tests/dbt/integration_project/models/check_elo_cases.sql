-- Elo through the package's staging and replay against hand-computed values (40-digit decimal arithmetic).
{% for quantity in ['expected_a', 'rating_a_after', 'rating_b_after'] %}
select r.match_id, '{{ quantity }}' as quantity, r.{{ quantity }} as actual, e.{{ quantity }} as expected
from {{ ref('replay_elo') }} as r
join {{ ref('elo_cases_expected') }} as e on e.match_id = r.match_id
{% if not loop.last %}union all{% endif %}
{% endfor %}
