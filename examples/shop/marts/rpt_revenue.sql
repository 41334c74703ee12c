-- {mode: full-refresh, tags: [daily], tests: [{expr: "sum(revenue) >= 0"}]}
select customer_name, sum(amount) as revenue, count(*) as orders
from {{ ref('fct_orders') }}
group by 1
