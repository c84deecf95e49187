-- Every raw match row with the reason it cannot be replayed (NULL when it can). Feeds stg_matches and rejected_matches.
{{ duckrate._checked_matches(duckrate._raw_matches()) }}
