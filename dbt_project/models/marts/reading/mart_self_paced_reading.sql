-- Self-paced reading per reader and word, every ingested row, with the standard exclusions flagged (never dropped):
-- int_self_paced_reading, published as is (the models that read these rows read int_self_paced_reading).
select * from {{ ref('int_self_paced_reading') }}
