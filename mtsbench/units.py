"""Time units of the simulated clock (seconds), defined once."""

HOUR = 3600.0
DAY = 86400.0
