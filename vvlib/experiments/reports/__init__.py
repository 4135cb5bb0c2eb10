"""What a page shows: tables and verdicts (report), the answer it opens with (answers), the
summary's claims (summary), figures (plots, explore), and what a scale allows one to say
(provisional, run_groups)."""
