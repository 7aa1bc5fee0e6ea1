"""Human reports of run directories (markdown tables; plots read only result files)."""
