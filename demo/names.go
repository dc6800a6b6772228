package demo

// The lists below are common Portuguese first names and surnames, real city names with their
// postal-code prefixes, and generic goods. Names are combined at random, so no row describes
// a real person.

var firstNamesF = []string{
	"Maria", "Ana", "Beatriz", "Inês", "Mariana", "Leonor", "Matilde", "Carolina", "Sofia",
	"Joana", "Catarina", "Rita", "Sara", "Marta", "Filipa", "Teresa", "Helena", "Isabel",
	"Patrícia", "Cláudia", "Sandra", "Raquel", "Diana", "Margarida", "Francisca", "Lara",
	"Alice", "Madalena", "Luísa", "Daniela", "Vera", "Susana", "Fernanda", "Rosa", "Graça",
}

var firstNamesM = []string{
	"João", "José", "António", "Francisco", "Manuel", "Pedro", "Tiago", "Rodrigo", "Duarte",
	"Martim", "Santiago", "Afonso", "Gonçalo", "Diogo", "Miguel", "Rui", "Nuno", "Paulo",
	"Ricardo", "Luís", "Carlos", "Jorge", "Bruno", "André", "Vasco", "Hugo", "Filipe",
	"Fernando", "Sérgio", "Vítor", "Daniel", "Gabriel", "Tomás", "Henrique", "Bernardo",
}

var surnames = []string{
	"Silva", "Santos", "Ferreira", "Pereira", "Oliveira", "Costa", "Rodrigues", "Martins",
	"Jesus", "Sousa", "Fernandes", "Gonçalves", "Gomes", "Lopes", "Marques", "Alves",
	"Almeida", "Ribeiro", "Pinto", "Carvalho", "Teixeira", "Moreira", "Correia", "Mendes",
	"Nunes", "Soares", "Vieira", "Monteiro", "Cardoso", "Rocha", "Raposo", "Neves", "Coelho",
	"Cruz", "Cunha", "Pires", "Ramos", "Reis", "Simões", "Antunes", "Matos", "Fonseca",
	"Machado", "Araújo", "Barbosa", "Tavares", "Lourenço", "Castro", "Figueiredo", "Azevedo",
}

// city is a real Portuguese municipality with the first four digits of its postal codes.
type city struct {
	name   string
	prefix int // first four digits of its postal codes
	span   int // how many consecutive prefixes the city uses
	region string
	area   string // landline area code (21 and 22 are two digits, the rest three)
	of     string // the name with its preposition: "de Lisboa", "do Porto"
}

var cities = []city{
	{"Lisboa", 1000, 990, "Lisboa e Vale do Tejo", "21", "de Lisboa"},
	{"Porto", 4000, 370, "Norte", "22", "do Porto"},
	{"Vila Nova de Gaia", 4400, 35, "Norte", "22", "de Vila Nova de Gaia"},
	{"Matosinhos", 4450, 15, "Norte", "22", "de Matosinhos"},
	{"Braga", 4700, 50, "Norte", "253", "de Braga"},
	{"Guimarães", 4800, 35, "Norte", "253", "de Guimarães"},
	{"Viana do Castelo", 4900, 25, "Norte", "258", "de Viana do Castelo"},
	{"Vila Real", 5000, 10, "Norte", "259", "de Vila Real"},
	{"Bragança", 5300, 10, "Norte", "273", "de Bragança"},
	{"Aveiro", 3800, 10, "Centro", "234", "de Aveiro"},
	{"Coimbra", 3000, 60, "Centro", "239", "de Coimbra"},
	{"Viseu", 3500, 20, "Centro", "232", "de Viseu"},
	{"Leiria", 2400, 25, "Centro", "244", "de Leiria"},
	{"Guarda", 6300, 20, "Centro", "271", "da Guarda"},
	{"Castelo Branco", 6000, 10, "Centro", "272", "de Castelo Branco"},
	{"Santarém", 2000, 10, "Lisboa e Vale do Tejo", "243", "de Santarém"},
	{"Amadora", 2700, 10, "Lisboa e Vale do Tejo", "21", "da Amadora"},
	{"Sintra", 2710, 25, "Lisboa e Vale do Tejo", "21", "de Sintra"},
	{"Cascais", 2750, 20, "Lisboa e Vale do Tejo", "21", "de Cascais"},
	{"Oeiras", 2780, 10, "Lisboa e Vale do Tejo", "21", "de Oeiras"},
	{"Almada", 2800, 25, "Lisboa e Vale do Tejo", "21", "de Almada"},
	{"Seixal", 2840, 15, "Lisboa e Vale do Tejo", "21", "do Seixal"},
	{"Setúbal", 2900, 25, "Lisboa e Vale do Tejo", "265", "de Setúbal"},
	{"Loures", 2670, 5, "Lisboa e Vale do Tejo", "21", "de Loures"},
	{"Évora", 7000, 5, "Alentejo", "266", "de Évora"},
	{"Beja", 7800, 5, "Alentejo", "284", "de Beja"},
	{"Portalegre", 7300, 5, "Alentejo", "245", "de Portalegre"},
	{"Faro", 8000, 5, "Algarve", "289", "de Faro"},
	{"Portimão", 8500, 5, "Algarve", "282", "de Portimão"},
	{"Funchal", 9000, 60, "Madeira", "291", "do Funchal"},
	{"Ponta Delgada", 9500, 60, "Açores", "296", "de Ponta Delgada"},
}

var streetKinds = []string{"Rua", "Avenida", "Travessa", "Largo", "Praça", "Estrada", "Alameda"}

var streetNames = []string{
	"da Liberdade", "de Santo António", "do Comércio", "da República", "5 de Outubro",
	"25 de Abril", "dos Bombeiros Voluntários", "da Igreja", "do Mercado", "das Flores",
	"Dom Afonso Henriques", "do Infante", "da Estação", "Nova", "do Carmo", "da Boavista",
	"de São João", "das Escolas", "do Sol", "dos Pescadores", "da Fonte", "do Castelo",
}

var emailDomains = []string{
	"gmail.com", "gmail.com", "gmail.com", "hotmail.com", "outlook.pt", "sapo.pt", "sapo.pt",
	"iol.pt", "netcabo.pt", "yahoo.com", "live.com.pt", "mail.telepac.pt",
}

var companyWords = []string{
	"Atlântico", "Lusitana", "Ibérica", "Douro", "Tejo", "Mondego", "Minho", "Algarve",
	"Estrela", "Norte", "Central", "Nova Era", "Horizonte", "Oceano", "Planície", "Serra",
}

var companySectors = []string{
	"Distribuição", "Comércio", "Transportes", "Construções", "Materiais", "Papelaria",
	"Informática", "Alimentar", "Têxteis", "Ferragens", "Serviços", "Logística",
}

// bankCodes are the four-digit codes of banks operating in Portugal, as they appear in NIBs.
var bankCodes = []string{"0007", "0010", "0018", "0023", "0033", "0035", "0036", "0045", "0079", "0269"}
