package export

// Under Wine, the tests' temporary folders are removable (winetest).
import _ "github.com/migrate-tool/migrate/internal/atomicfile/winetest"
