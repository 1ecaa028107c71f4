-- The ten seeds that took longest (generate + verify), accepted or not.
SELECT seed, 'accepted' AS status, NULL AS reason, round(generate_ms + solve_ms, 3) AS ms, nodes, worker
FROM levels
UNION ALL
SELECT seed, status, reason, round(generate_ms + solve_ms, 3), nodes, worker
FROM rejects
ORDER BY ms DESC, seed
LIMIT 10;
