"""HTTP views, one blueprint per area of API.md."""
