-- How difficulty rises along the campaigns: per position, over every campaign.
SELECT position,
       count(*)                         AS campaigns,
       round(min(difficulty), 3)        AS difficulty_min,
       round(avg(difficulty), 3)        AS difficulty_mean,
       round(max(difficulty), 3)        AS difficulty_max
FROM campaigns
GROUP BY position
ORDER BY position;
