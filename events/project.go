package events

// ProjectInitialized is the first event of every project log (stream
// "project"). It names the project and records the awr version that created
// the log.
type ProjectInitialized struct {
	ProjectID  string `json:"project_id"`
	Name       string `json:"name"`
	AWRVersion string `json:"awr_version,omitempty"`
}

// Kind returns KindProjectInitialized.
func (ProjectInitialized) Kind() Kind { return KindProjectInitialized }
