"""What answers cost: the price table and the run's cost cap."""
