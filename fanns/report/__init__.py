"""Design-space sweep reports (`fanns sweep`): the computation (`sweep`, `curves`), the figures,
the tables shared by HTML and CSV, the page (`html`, templates in `templates/report/`) and the
atomic output folder (`folder`)."""
