-- Figure 4 of Casares et al. 2022: median effort (seconds) per component, domain and condition: int_wild_effort,
-- published as is (mart_wild_cost reads the int model).
select * from {{ ref('int_wild_effort') }}
