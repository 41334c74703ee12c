/**
mode: view
tags: [staging]
tests:
  - unique: id
**/
select id, name, zip from raw_customers
