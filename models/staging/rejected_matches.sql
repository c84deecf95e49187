-- Raw rows that cannot be replayed: source_row, the reason, and the raw columns as they came.
select source_row, reason, unnest(raw_row)
from {{ ref('stg_matches_checked') }}
where reason is not null
