/**
mode: incremental
unique_key: id
update_key: updated_at
tags: [daily]
tests:
  - unique: id
  - relationships: {column: customer_id, to: stg_customers, field: id}
**/
select o.id, o.customer_id, c.name as customer_name, o.amount, o.status, o.updated_at
from @stg_orders o
join staging.stg_customers c on c.id = o.customer_id
where {{ incremental_where_cond() }}
