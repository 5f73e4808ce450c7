"""Knowledge extractors: population, problem, intervention, outcome, evidence."""
