/**
mode: view
tags: [staging]
tests:
  - not_null: [id, customer_id]
  - accepted_values: {column: status, values: [placed, shipped]}
**/
select id, customer_id, amount, {{ cents('amount') }} as amount_cents, status, updated_at
from {{ ref('raw_orders') }}
where amount >= {{ min_amount }}
