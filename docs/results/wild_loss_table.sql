-- Prompts in the wild (Casares et al. 2022, Table 1): the self-assessed loss L_H with GPT-3 and by hand per domain,
-- ours beside the paper's, and the Holm-corrected p-value of the test the normality checks choose (mart_wild_loss).
select domain as "domain",
       max(printf('%.3f / %.2f', loss_mean, paper_loss_mean)) filter (where condition = 'with_model') as "L_H with GPT-3 (ours / paper)",
       max(printf('%.3f / %.2f', loss_mean, paper_loss_mean)) filter (where condition = 'without_model') as "L_H by hand (ours / paper)",
       max(replace(replace(test, 'mann_whitney_u', 'Mann-Whitney U'), 't_test', 'Student''s t')) as "test",
       max(printf('%.2g / %.2g', p_value_holm, paper_p_value_holm)) as "Holm p (ours / paper)"
from mart_wild_loss
group by domain, domain_order
order by domain_order
