# SPDX-License-Identifier: MIT
"""parplan's Python package (placeholder of the pyprofile branch: the
package's real __init__ comes with the ctypes API)."""
