package rest

import "net/http"

// managedOperations change or delete objects configuration as code may manage
// (connections, teams, domains, notification channels, rules): each answers 409
// managed_by_config for a managed one, whatever the caller.
var managedOperations = map[string]bool{
	"updateConnection": true, "updateConnectionSchedule": true,
	"renameTeam": true, "deleteTeam": true, "addTeamMember": true, "removeTeamMember": true,
	"updateDomain":              true,
	"updateNotificationChannel": true, "deleteNotificationChannel": true,
	"updateRule": true, "deleteRule": true,
}

const managedDesc = "managed_by_config: configuration as code (vigia apply) manages the object; change the file and apply it"

// withManaged adds the 409 managed_by_config answer to an operation's documented errors.
func withManaged(errs map[int]string) map[int]string {
	out := make(map[int]string, len(errs)+1)
	for code, desc := range errs {
		out[code] = desc
	}
	if d, ok := out[http.StatusConflict]; ok {
		out[http.StatusConflict] = d + "; or " + managedDesc
	} else {
		out[http.StatusConflict] = managedDesc
	}
	return out
}
